/*
 * k-means distance step: squared distances of every sample to every centroid (double).
 */
void centroid_distances_f64(int n, int nc, int m, double X[n][m], double M[nc][m], double D[n][nc])
{
    for (int i = 0; i < n; i++)
        for (int c = 0; c < nc; c++)
            for (int k = 0; k < m; k++)
                D[i][c] += (X[i][k] - M[c][k]) * (X[i][k] - M[c][k]);
}
