/*
 * general times upper-triangular from the right, C += B U with k <= j (float).
 */
void trmm_right_upper_f32(int n, int m, float U[m][m], float B[n][m], float C[n][m])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            for (int k = 0; k <= j; k++)
                C[i][j] += B[i][k] * U[k][j];
}
