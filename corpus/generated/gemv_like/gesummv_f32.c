/*
 * y = alpha A x + beta B x with two accumulator arrays (float).
 */
void gesummv_f32(int n, float alpha, float beta, float A[n][n], float B[n][n], float x[n],
                 float y[n], float tmp[n])
{
    for (int i = 0; i < n; i++) {
        tmp[i] = 0.0f;
        y[i] = 0.0f;
        for (int j = 0; j < n; j++) {
            tmp[i] += A[i][j] * x[j];
            y[i] += B[i][j] * x[j];
        }
        y[i] = alpha * tmp[i] + beta * y[i];
    }
}
