/*
 * sum of all matrix entries walking columns (strided) (float).
 */
float sum2d_ji_f32(int n, int m, float A[n][m])
{
    int j, i;
    float s = 0.0f;

    for (j = 0; j < m; j++)
        for (i = 0; i < n; i++)
            s += A[i][j];
    return s;
}
