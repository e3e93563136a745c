/*
 * batched dot products with the element loop outside and the batch inside (float).
 */
void bdot_ib_f32(int nb, int n, float x[nb][n], float y[nb][n], float d[nb])
{
    for (int i = 0; i < n; i++)
        for (int b = 0; b < nb; b++)
            d[b] += x[b][i] * y[b][i];
}
