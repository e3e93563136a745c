/*
 * STREAM scale b = s c (double).
 */
void stream_scale_f64(int n, double s, double b[n], double c[n])
{
    for (int i = 0; i < n; ++i)
        b[i] = s * c[i];
}
