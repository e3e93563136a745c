/*
 * autocorrelation r[lag] += x[t] x[t + lag] for lags below nl (float).
 */
void autocorrelation_f32(int n, int nl, float x[n + nl], float r[nl])
{
    int l, i;

    for (l = 0; l < nl; l++)
        for (i = 0; i < n; i++)
            r[l] += x[i] * x[i + l];
}
