/* Gather: y[i] = x[idx[i]]. */
void gather(int n, int m, const int idx[n], const double x[m], double y[n])
{
    for (int i = 0; i < n; i++)
        y[i] = x[idx[i]];
}
