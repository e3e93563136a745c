/*
 * syrk C += A A^T on the upper triangle with the k loop outermost (float).
 */
void syrk_upper_kij_f32(int n, int m, float C[n][n], float A[n][m])
{
    for (int k = 0; k < m; ++k)
        for (int i = 0; i < n; ++i)
            for (int j = i; j < n; ++j)
                C[i][j] += A[i][k] * A[j][k];
}
