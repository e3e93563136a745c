/*
 * forward substitution (dot form) for L x = b, diagonal shifted by n to keep the solve well
 * conditioned (float).
 */
void trsv_lower_dot_f32(int n, float L[n][n], float b[n], float x[n])
{
    int i, j;

    for (i = 0; i < n; i++) {
        float s = b[i];
        for (j = 0; j < i; j++)
            s -= L[i][j] * x[j];
        x[i] = s / (L[i][i] + n);
    }
}
