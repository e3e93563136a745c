/*
 * saxpy y += a x (float).
 */
void saxpy_f32(int n, float a, float x[n], float y[n])
{
    for (int i = 0; i < n; i++)
        y[i] += a * x[i];
}
