/*
 * sum of a vector into a scalar accumulator (float).
 */
float sum1d_f32(int n, float x[n])
{
    float s = 0.0f;

    for (int i = 0; i < n; i++)
        s += x[i];
    return s;
}
