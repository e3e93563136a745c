/*
 * symmetric matrix times general with the upper triangle mirrored on the fly: C[i][j] +=
 * A[min(i,k)][max(i,k)] B[k][j] split into two k ranges (float).
 */
void symm_upper_full_f32(int m, int n, float C[m][n], float A[m][m], float B[m][n])
{
    int i, k, j;

    for (i = 0; i < m; i++) {
        for (k = 0; k < i; k++)
            for (j = 0; j < n; j++)
                C[i][j] += A[k][i] * B[k][j];
        for (k = i; k < m; k++)
            for (j = 0; j < n; j++)
                C[i][j] += A[i][k] * B[k][j];
    }
}
