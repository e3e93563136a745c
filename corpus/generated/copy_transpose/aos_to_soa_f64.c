/*
 * array of 3-D points to three coordinate arrays (double).
 */
void aos_to_soa_f64(int n, double P[n][3], double x[n], double y[n], double z[n])
{
    for (int i = 0; i < n; i++) {
        x[i] = P[i][0];
        y[i] = P[i][1];
        z[i] = P[i][2];
    }
}
