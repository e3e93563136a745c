/*
 * batched Gram matrices G[b] += X[b]^T X[b] (full, not exploiting symmetry) (float).
 */
void bgram_f32(int nb, int n, int m, float G[nb][m][m], float X[nb][n][m])
{
    for (int b = 0; b < nb; b++)
        for (int k = 0; k < n; k++)
            for (int i = 0; i < m; i++)
                for (int j = 0; j < m; j++)
                    G[b][i][j] += X[b][k][i] * X[b][k][j];
}
