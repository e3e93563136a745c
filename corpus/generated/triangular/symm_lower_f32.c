/*
 * symm C = alpha A B + beta C with A symmetric, only its lower triangle read (float).
 */
void symm_lower_f32(int m, int n, float alpha, float beta, float C[m][n], float A[m][m],
                    float B[m][n])
{
    int i, j, k;

    for (i = 0; i < m; i++)
        for (j = 0; j < n; j++) {
            float t2 = 0.0f;
            for (k = 0; k < i; k++) {
                C[k][j] += alpha * B[i][j] * A[i][k];
                t2 += B[k][j] * A[i][k];
            }
            C[i][j] = beta * C[i][j] + alpha * B[i][j] * A[i][i] + alpha * t2;
        }
}
