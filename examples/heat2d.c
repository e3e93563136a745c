/* Textbook explicit heat equation on a 2-D plate: 5-point stencil, Jacobi sweeps. */
#include <stdio.h>

#define N 1200

static double u[N][N], v[N][N];

static void heat(int steps, int n)
{
    for (int t = 0; t < steps; t++) {
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                v[i][j] = u[i][j] + 0.2 * (u[i - 1][j] + u[i + 1][j] + u[i][j - 1] + u[i][j + 1] - 4.0 * u[i][j]);
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                u[i][j] = v[i][j];
    }
}

int main(void)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            u[i][j] = (i == N / 2 && j == N / 2) ? 1000.0 : 0.0;
    heat(40, N);
    double total = 0.0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            total += u[i][j];
    printf("%.6f\n", total);
    return 0;
}
