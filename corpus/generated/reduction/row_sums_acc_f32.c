/*
 * row sums through a local accumulator, r[i] = sum_j A[i][j] (float).
 */
void row_sums_acc_f32(int n, int m, float A[n][m], float r[n])
{
    for (int i = 0; i < n; ++i) {
        float acc = 0.0f;
        for (int j = 0; j < m; ++j)
            acc += A[i][j];
        r[i] = acc;
    }
}
