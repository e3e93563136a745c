/*
 * syrk C += A^T A on the lower triangle, k outermost (rank-1 updates) (float).
 */
void syrk_lower_trans_kij_f32(int n, int m, float C[n][n], float A[m][n])
{
    for (int k = 0; k < m; k++)
        for (int i = 0; i < n; i++)
            for (int j = 0; j <= i; j++)
                C[i][j] += A[k][i] * A[k][j];
}
