/*
 * gather y[i] = x[idx[i]] (float).
 */
void gather_f32(int n, int m, int idx[n], float x[m], float y[n])
{
    for (int i = 0; i < n; i++)
        y[i] = x[idx[i]];
}
