/*
 * column sums c[j] += A[i][j], rows outside (float).
 */
void col_sums_ij_f32(int n, int m, float A[n][m], float c[m])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            c[j] += A[i][j];
}
