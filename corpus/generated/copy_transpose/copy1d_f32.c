/*
 * vector copy (float).
 */
void copy1d_f32(int n, float x[n], float y[n])
{
    for (int i = 0; i < n; i++)
        y[i] = x[i];
}
