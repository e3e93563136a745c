/*
 * column means: sums, then one division per column (marked region, two nests) (float).
 */
void col_mean_f32(int n, int m, float A[n][m], float mu[m])
{
#pragma scop
    for (int j = 0; j < m; j++)
        mu[j] = 0.0f;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            mu[j] += A[i][j];
    for (int j = 0; j < m; j++)
        mu[j] = mu[j] / n;
#pragma endscop
}
