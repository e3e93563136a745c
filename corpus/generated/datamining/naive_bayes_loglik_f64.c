/*
 * naive Bayes log-likelihoods L[i][c] += X[i][f] logp[c][f] (double).
 */
void naive_bayes_loglik_f64(int n, int nc, int nf, double X[n][nf], double logp[nc][nf],
                            double L[n][nc])
{
    for (int i = 0; i < n; i++)
        for (int c = 0; c < nc; c++)
            for (int f = 0; f < nf; f++)
                L[i][c] += X[i][f] * logp[c][f];
}
