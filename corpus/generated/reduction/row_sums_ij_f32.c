/*
 * row sums r[i] += A[i][j] (float).
 */
void row_sums_ij_f32(int n, int m, float A[n][m], float r[n])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            r[i] += A[i][j];
}
