/*
 * rank-1 update A += alpha x y^T, i outer (float).
 */
void ger_ij_f32(int n, int m, float alpha, float A[n][m], float x[n], float y[m])
{
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < m; ++j)
            A[i][j] += alpha * x[i] * y[j];
}
