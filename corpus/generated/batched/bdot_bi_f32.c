/*
 * batched dot products d[b] += x[b][i] y[b][i], batch outer (float).
 */
void bdot_bi_f32(int nb, int n, float x[nb][n], float y[nb][n], float d[nb])
{
    int b, i;

    for (b = 0; b < nb; ++b)
        for (i = 0; i < n; ++i)
            d[b] += x[b][i] * y[b][i];
}
