/*
 * rank-1 update A += x y^T, column loop outside (float).
 */
void ger_ji_f32(int n, int m, float A[n][m], float x[n], float y[m])
{
    for (int j = 0; j < m; j++)
        for (int i = 0; i < n; i++)
            A[i][j] += x[i] * y[j];
}
