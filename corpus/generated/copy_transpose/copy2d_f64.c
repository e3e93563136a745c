/*
 * matrix copy (double).
 */
void copy2d_f64(int n, int m, double A[n][m], double B[n][m])
{
    int i, j;

    for (i = 0; i < n; i++)
        for (j = 0; j < m; j++)
            B[i][j] = A[i][j];
}
