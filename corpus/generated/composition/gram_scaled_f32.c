/*
 * G = X^T X accumulated by rank-1 updates, then divided by n (marked region) (float).
 */
void gram_scaled_f32(int n, int m, float X[n][m], float G[m][m])
{
#pragma scop
    for (int k = 0; k < n; k++)
        for (int i = 0; i < m; i++)
            for (int j = 0; j < m; j++)
                G[i][j] += X[k][i] * X[k][j];
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++)
            G[i][j] = G[i][j] / n;
#pragma endscop
}
