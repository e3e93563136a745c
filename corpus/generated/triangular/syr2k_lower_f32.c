/*
 * syr2k C = beta C + alpha (A B^T + B A^T) on the lower triangle (float).
 */
void syr2k_lower_f32(int n, int m, float alpha, float beta, float C[n][n], float A[n][m],
                     float B[n][m])
{
    int i, j, k;

    for (i = 0; i < n; ++i) {
        for (j = 0; j <= i; ++j)
            C[i][j] *= beta;
        for (k = 0; k < m; ++k)
            for (j = 0; j <= i; ++j)
                C[i][j] += A[j][k] * alpha * B[i][k] + B[j][k] * alpha * A[i][k];
    }
}
