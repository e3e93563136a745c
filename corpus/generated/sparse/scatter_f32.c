/*
 * scatter y[idx[i]] = x[i] (float).
 */
void scatter_f32(int n, int m, int idx[n], float x[n], float y[m])
{
    for (int i = 0; i < n; ++i)
        y[idx[i]] = x[i];
}
