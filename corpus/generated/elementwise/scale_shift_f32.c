/*
 * layer-norm style affine map Y = g[j] X + b[j] (float).
 */
void scale_shift_f32(int n, int m, float X[n][m], float g[m], float b[m], float Y[n][m])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            Y[i][j] = g[j] * X[i][j] + b[j];
}
