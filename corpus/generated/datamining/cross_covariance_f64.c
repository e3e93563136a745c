/*
 * cross-covariance of two data sets with given means, samples outermost (double).
 */
void cross_covariance_f64(int n, int p, int q, double X[n][p], double Y[n][q], double mx[p],
                          double my[q], double C[p][q])
{
    int i, a, b;

    for (i = 0; i < n; ++i)
        for (a = 0; a < p; ++a)
            for (b = 0; b < q; ++b)
                C[a][b] += (X[i][a] - mx[a]) * (Y[i][b] - my[b]);
}
