/*
 * pairwise squared Euclidean distances between rows, loop order ikj (float).
 */
void sqdist_ikj_f32(int n, int m, float X[n][m], float D[n][n])
{
    for (int i = 0; i < n; i++)
        for (int k = 0; k < m; k++)
            for (int j = 0; j < n; j++) {
                float d = X[i][k] - X[j][k];
                D[i][j] += d * d;
            }
}
