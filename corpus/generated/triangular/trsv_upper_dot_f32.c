/*
 * back substitution (dot form) for U x = b walking rows from the bottom, diagonal shifted by n
 * (float).
 */
void trsv_upper_dot_f32(int n, float U[n][n], float b[n], float x[n])
{
    for (int i = n - 1; i >= 0; i--) {
        float s = b[i];
        for (int j = i + 1; j < n; j++)
            s -= U[i][j] * x[j];
        x[i] = s / (U[i][i] + n);
    }
}
