/*
 * squared Frobenius norm of a matrix (float).
 */
float frobenius_f32(int n, int m, float A[n][m])
{
    float s = 0.0f;

    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            s += A[i][j] * A[i][j];
    return s;
}
