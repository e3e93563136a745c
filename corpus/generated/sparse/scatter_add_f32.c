/*
 * scatter-add y[idx[i]] += x[i] (float).
 */
void scatter_add_f32(int n, int m, int idx[n], float x[n], float y[m])
{
    int i;

    for (i = 0; i < n; i++)
        y[idx[i]] += x[i];
}
