/*
 * 2-D 3x3 box blur, 9-point, no time loop (double).
 */
void blur2d_3x3_f64(int n, double A[n][n], double B[n][n])
{
    int i, j;

    for (i = 1; i < n - 1; i++)
        for (j = 1; j < n - 1; j++)
            B[i][j] = (A[i - 1][j - 1] + A[i - 1][j] + A[i - 1][j + 1] + A[i][j - 1]
                + A[i][j] + A[i][j + 1] + A[i + 1][j - 1] + A[i + 1][j]
                + A[i + 1][j + 1]) / 9.0;
}
