/* One 5-point Jacobi sweep on a fixed-size grid. */
#define N 200

void jacobi2d(double A[N][N], double B[N][N])
{
    int i, j;

    for (i = 1; i < N - 1; i++)
        for (j = 1; j < N - 1; j++)
            B[i][j] = 0.2 * (A[i][j] + A[i - 1][j] + A[i + 1][j]
                             + A[i][j - 1] + A[i][j + 1]);
}
