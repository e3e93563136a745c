/*
 * pairwise squared Euclidean distances between rows, loop order ijk (double).
 */
void sqdist_ijk_f64(int n, int m, double X[n][m], double D[n][n])
{
    int i, j, k;

    for (i = 0; i < n; i++)
        for (j = 0; j < n; j++)
            for (k = 0; k < m; k++) {
                double d = X[i][k] - X[j][k];
                D[i][j] += d * d;
            }
}
