/*
 * weighted scatter matrix of centred data, C[a][b] += w[i] Xc[i][a] Xc[i][b] (double).
 */
void weighted_covariance_f64(int n, int m, double Xc[n][m], double w[n], double C[m][m])
{
    int a, b, i;

    for (a = 0; a < m; a++)
        for (b = 0; b < m; b++)
            for (i = 0; i < n; i++)
                C[a][b] += w[i] * Xc[i][a] * Xc[i][b];
}
