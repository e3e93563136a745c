/*
 * symv y += A x reading only the lower triangle (each off-diagonal entry used twice) (float).
 */
void symv_lower_f32(int n, float A[n][n], float x[n], float y[n])
{
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < i; j++) {
            y[i] += A[i][j] * x[j];
            y[j] += A[i][j] * x[i];
        }
        y[i] += A[i][i] * x[i];
    }
}
