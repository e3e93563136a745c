/*
 * Sample covariance of the m columns of an n x m data matrix: column means,
 * centring in place, then the symmetric product (upper triangle computed,
 * mirrored into the lower one). Marked region with three top-level nests.
 */
void covariance(int n, int m, double X[n][m], double mu[m], double S[m][m])
{
    int r, c, p, q;

#pragma scop
    for (c = 0; c < m; c++) {
        double s = 0.0;
        for (r = 0; r < n; r++)
            s += X[r][c];
        mu[c] = s / n;
    }
    for (r = 0; r < n; r++)
        for (c = 0; c < m; c++)
            X[r][c] -= mu[c];
    for (p = 0; p < m; p++)
        for (q = p; q < m; q++) {
            double acc = 0.0;
            for (r = 0; r < n; r++)
                acc += X[r][p] * X[r][q];
            S[p][q] = acc / (n - 1);
            S[q][p] = S[p][q];
        }
#pragma endscop
}
