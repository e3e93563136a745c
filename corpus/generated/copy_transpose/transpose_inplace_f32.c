/*
 * in-place transpose of a square matrix, swapping through a scalar temporary (float).
 */
void transpose_inplace_f32(int n, float A[n][n])
{
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            float tmp = A[i][j];
            A[i][j] = A[j][i];
            A[j][i] = tmp;
        }
}
