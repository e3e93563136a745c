/*
 * syr2k C += A B^T + B A^T on the upper triangle, k innermost (double).
 */
void syr2k_upper_ijk_f64(int n, int m, double C[n][n], double A[n][m], double B[n][m])
{
    int i, j, k;

    for (i = 0; i < n; ++i)
        for (j = i; j < n; ++j)
            for (k = 0; k < m; ++k)
                C[i][j] += A[i][k] * B[j][k] + B[i][k] * A[j][k];
}
