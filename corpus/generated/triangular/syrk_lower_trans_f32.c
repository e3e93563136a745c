/*
 * syrk with A transposed: C += A^T A on the lower triangle, k innermost (float).
 */
void syrk_lower_trans_f32(int n, int m, float C[n][n], float A[m][n])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++)
            for (int k = 0; k < m; k++)
                C[i][j] += A[k][i] * A[k][j];
}
