/* Textbook matrix multiply (row-by-column dot products), as found in introductory courses. */
#include <stdio.h>
#include <stdlib.h>

#define N 800

static double A[N][N], B[N][N], C[N][N];

static void matmul(int n)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double sum = 0.0;
            for (int k = 0; k < n; k++)
                sum += A[i][k] * B[k][j];
            C[i][j] = sum;
        }
}

int main(void)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            A[i][j] = (double)((i * 7 + j) % 13) / 13.0;
            B[i][j] = (double)((i + 3 * j) % 11) / 11.0;
        }
    matmul(N);
    double checksum = 0.0;
    for (int i = 0; i < N; i++)
        checksum += C[i][i % N] + C[i][(i * 5) % N];
    printf("%.6f\n", checksum);
    return 0;
}
