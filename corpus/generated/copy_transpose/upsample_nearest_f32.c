/*
 * 2x nearest-neighbour upsampling: four writes per source element (float).
 */
void upsample_nearest_f32(int n, int m, float A[n][m], float B[2 * n][2 * m])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++) {
            B[2 * i][2 * j] = A[i][j];
            B[2 * i][2 * j + 1] = A[i][j];
            B[2 * i + 1][2 * j] = A[i][j];
            B[2 * i + 1][2 * j + 1] = A[i][j];
        }
}
