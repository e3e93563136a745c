/* Scatter: y[idx[i]] = x[i] (a later index wins). */
void scatter(int n, int m, const int idx[n], const double x[n], double y[m])
{
    for (int i = 0; i < n; i++)
        y[idx[i]] = x[i];
}
