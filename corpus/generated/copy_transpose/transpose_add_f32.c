/*
 * symmetric part B = A + A^T (float).
 */
void transpose_add_f32(int n, float A[n][n], float B[n][n])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            B[i][j] = A[i][j] + A[j][i];
}
