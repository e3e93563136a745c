/*
 * batched axpy with one scale per batch entry, Y[b][i] += s[b] X[b][i] (float).
 */
void baxpy_2d_f32(int nb, int n, float s[nb], float X[nb][n], float Y[nb][n])
{
    for (int b = 0; b < nb; ++b)
        for (int i = 0; i < n; ++i)
            Y[b][i] += s[b] * X[b][i];
}
