/*
 * three coordinate arrays to an array of 3-D points (float).
 */
void soa_to_aos_f32(int n, float x[n], float y[n], float z[n], float P[n][3])
{
    for (int i = 0; i < n; i++) {
        P[i][0] = x[i];
        P[i][1] = y[i];
        P[i][2] = z[i];
    }
}
