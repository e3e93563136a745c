/*
 * axpy where a mask is set, if (mask[i] != 0) y[i] += a * x[i] (float).
 */
void masked_axpy_f32(int n, float a, int mask[n], float x[n], float y[n])
{
    for (int i = 0; i < n; i++)
        if (mask[i] != 0)
            y[i] += a * x[i];
}
