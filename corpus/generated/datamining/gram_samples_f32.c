/*
 * sample Gram matrix G = X X^T / m through a local accumulator (float).
 */
void gram_samples_f32(int n, int m, float X[n][m], float G[n][n])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            float acc = 0.0f;
            for (int k = 0; k < m; k++)
                acc += X[i][k] * X[j][k];
            G[i][j] = acc / m;
        }
}
