/*
 * vertical flip of a matrix, B[i][j] = A[n - 1 - i][j] (float).
 */
void flip_rows_f32(int n, int m, float A[n][m], float B[n][m])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            B[i][j] = A[n - 1 - i][j];
}
